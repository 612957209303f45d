"""The scene: what the user drew, as validated, immutable models, and its JSON file.

A scene file is a JSON object with ``"format": "impactgui-scene"`` and
``"version": 2`` (see docs/CONTRACT.md, "Scene file"; version 1 files are read as they
were). Every model attribute below is
spelled exactly as its JSON key, so ``Scene.model_validate(json_object)`` and
``scene_to_dict(scene)`` are inverse to each other. Unknown keys are errors,
every number must be finite, and all models are frozen (edit with
``model.model_copy(update={...})`` and validate again with
``parse_scene(scene_to_dict(...))``).

Defaults (the one place they are documented; SI units)
------------------------------------------------------
=====================================  =========================================
key                                    default when the key is missing
=====================================  =========================================
``title``                              ``"Untitled"``
``description``                        ``""`` (one sentence for the Presets menu)
``view``                               ``"side"`` (``"top"``: axle carts only)
``gravity``                            ``[0, -9.81]`` m/s² in a side view,
                                       ``[0, 0]`` in a top view
``contact.restitution``                ``0.5``
``contact.friction``                   ``0.0``
``contact.impact_law``                 ``"staged"``
``boundaries``, ``bodies``,            ``[]``
``springs``, ``forces``, ``impulses``
boundary ``restitution`` / ``friction`` ``null``: use the ``contact`` value
boundary ``compliance``                ``null``: ``contact.compliance``
``contact.compliance``                 ``null``: every contact rigid
compliance ``damping``                 ``0`` N·s/m
compliance ``exponent``                ``1`` (linear spring; ``1.5`` Hertz)
wheel ``angle``                        ``0`` rad
wheel ``velocity``                     ``[0, 0]`` m/s
wheel ``angular_velocity``             ``0`` rad/s
bead ``vx``                            ``0`` m/s
axle cart ``angle``                    ``0`` rad
axle cart ``wheel_angles``             ``[0, 0]`` rad
axle cart ``wheel_rates``              ``[0, 0]`` rad/s
spring ``damping``                     ``0`` N·s/m
force ``type``                         ``"harmonic"``
force ``phase``                        ``0`` rad
``solver.method``                      ``"event-driven"``
``solver.t_end``                       ``1.0`` s
``solver.dt_out``                      ``0.001`` s
``solver.dt``                          ``1e-4`` s (time-stepping step only)
``solver.rtol``, ``solver.atol``       ``null``: the stepper's own tolerances
=====================================  =========================================

``format`` and ``version`` are required in a file. ``save_scene`` writes every
key, defaults included, except those whose value is ``null`` (all of which
default to ``null``), so load → save → load gives an equal scene.

Geometry conventions: a segment joins ``a`` to ``b``; a polyline joins its
``points`` in order; an arc of ``radius`` around ``center`` runs
counter-clockwise from the polar angle ``start_deg`` to ``end_deg`` (degrees
from +x, as ``solver.geometry.Arc``: start 180, end 0 is the lower half;
``end_deg − start_deg = ±360`` is a full circle). Boundaries are thin walls, solid from both sides.
A bead is a disk of ``radius`` centred at ``(x, rail_y)`` that moves along x.
An axle cart (paper 001, top view) is an axle of mass ``axle_mass`` and length
``2 half_length`` centred at ``position`` = (x_C, y_C) at ``angle`` φ from +x,
with a wheel of ``wheel_mass`` and ``wheel_radius`` at each end (A at
C − l(cos φ, sin φ), B at C + l(cos φ, sin φ)); its two degrees of freedom
are the wheel rates θ̇_A, θ̇_B. A spring's force acts along the line joining
its two ends (body centres or anchor). A harmonic force is
``F(t) = amplitude · sin(omega t + phase)`` (N) at the body's centre. A
scheduled impulse ``vector`` (N·s) acts at ``point`` (m) at time ``time`` (s),
both in the axes its ``frame`` names (see ``ScheduledImpulse``).

Versions: 1 is the first format; 2 adds an impulse's ``frame`` (``"world"``,
the default, is what version 1 meant). A version-1 file is read unchanged.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import (
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from solver.atomic_file import atomic_write
from solver.errors import InputError
from solver.scene_checks import (
    BODY_POINT_RTOL,
    Loc,
    Point,
    _scene_problems,
    disk_centre,
    distance_to_boundary,
)
from solver.scene_fields import (
    FORMAT,
    IMPACT_LAWS,
    MAGNITUDES,
    MAX_FILE_BYTES,
    MAX_ID,
    MAX_ITEMS,
    MAX_NESTING,
    MAX_PROBLEMS,
    MAX_SAMPLES,
    MAX_TEXT,
    MAX_TIME_STEPS,
    SIDE_GRAVITY,
    TOUCH_TOLERANCE,
    VERSION,
    Angle,
    Coordinate,
    Duration,
    Fraction,
    Friction,
    Identifier,
    ImpactLaw,
    Length,
    Mass,
    NonNegative,
    Number,
    Point2,
    Positive,
    Text,
    Tolerance,
    Vec2,
    _Model,
    _show,
    _vector,
)
from solver.scene_parts import (
    COMPLIANCE_EXPONENTS,
    Action,
    ArcBoundary,
    AxleCart,
    Bead,
    Body,
    Boundary,
    Compliance,
    ContactDefaults,
    HarmonicForce,
    PolylineBoundary,
    ScheduledImpulse,
    SegmentBoundary,
    SetAction,
    SolverSettings,
    Spring,
    StateAction,
    Wheel,
    run_size_problems,
)

# ------------------------------------------------------------------------ scene


__all__ = [  # this module's names and its parts' (importable from here as before)
    "BODY_POINT_RTOL",
    "COMPLIANCE_EXPONENTS",
    "FORMAT",
    "IMPACT_LAWS",
    "MAGNITUDES",
    "MAX_FILE_BYTES",
    "MAX_ID",
    "MAX_ITEMS",
    "MAX_NESTING",
    "MAX_PROBLEMS",
    "MAX_SAMPLES",
    "MAX_TEXT",
    "MAX_TIME_STEPS",
    "SIDE_GRAVITY",
    "TOUCH_TOLERANCE",
    "VERSION",
    "Action",
    "Angle",
    "ArcBoundary",
    "AxleCart",
    "Bead",
    "Body",
    "Boundary",
    "Compliance",
    "ContactDefaults",
    "Coordinate",
    "Duration",
    "Fraction",
    "Friction",
    "HarmonicForce",
    "Identifier",
    "ImpactLaw",
    "Length",
    "Loc",
    "Mass",
    "NonNegative",
    "Number",
    "Point",
    "Point2",
    "PolylineBoundary",
    "Positive",
    "Scene",
    "SceneError",
    "ScheduledImpulse",
    "SegmentBoundary",
    "SetAction",
    "SolverSettings",
    "Spring",
    "StateAction",
    "Text",
    "Tolerance",
    "Vec2",
    "Wheel",
    "disk_centre",
    "distance_to_boundary",
    "load_scene",
    "migrate",
    "nesting_depth",
    "parse_scene",
    "read_scene_text",
    "run_size_problems",
    "save_scene",
    "scene_data_from_text",
    "scene_to_dict",
    "text_nesting_depth",
]


class Scene(_Model):
    """A whole scene: boundaries, bodies, their couplings, and how to run it.

    Beyond the per-field checks, a scene is refused when ids repeat, a spring,
    force or impulse names a missing body, a boundary is degenerate, a body
    overlaps a boundary or another body at t = 0 (touching is allowed), or
    the view and body types disagree. See the module docstring for defaults.
    """

    format: Literal["impactgui-scene"] = FORMAT
    version: Literal[2] = VERSION
    title: Text = "Untitled"
    description: Text = ""
    view: Literal["side", "top"] = "side"
    gravity: _vector("acceleration") = SIDE_GRAVITY
    contact: ContactDefaults = ContactDefaults()
    boundaries: tuple[Boundary, ...] = Field((), max_length=MAX_ITEMS)
    bodies: tuple[Body, ...] = Field((), max_length=MAX_ITEMS)
    springs: tuple[Spring, ...] = Field((), max_length=MAX_ITEMS)
    forces: tuple[HarmonicForce, ...] = Field((), max_length=MAX_ITEMS)
    impulses: tuple[ScheduledImpulse, ...] = Field((), max_length=MAX_ITEMS)
    solver: SolverSettings = SolverSettings()
    actions: tuple[Action, ...] = Field((), max_length=MAX_ITEMS)

    @model_validator(mode="before")
    @classmethod
    def _top_view_has_no_gravity(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("view") == "top" and "gravity" not in data:
            return {**data, "gravity": (0.0, 0.0)}
        return data

    @model_validator(mode="after")
    def _physically_valid(self) -> Scene:
        problems = list(itertools.islice(_scene_problems(self), MAX_PROBLEMS + 1))
        if len(problems) > MAX_PROBLEMS:
            problems[-1] = ((), f"more problems not listed (the first {MAX_PROBLEMS} are)")
        if problems:
            raise ValidationError.from_exception_data(
                "Scene",
                [
                    {"type": PydanticCustomError("scene", message), "loc": loc, "input": None}
                    for loc, message in problems
                ],
            )
        return self

    def body(self, body_id: str) -> Wheel | Bead | AxleCart:
        """The body called ``body_id``; ``KeyError`` if there is none."""
        for body in self.bodies:
            if body.id == body_id:
                return body
        raise KeyError(f"no body with id {body_id!r}")

    def boundary(self, boundary_id: str) -> SegmentBoundary | PolylineBoundary | ArcBoundary:
        """The boundary called ``boundary_id`` (a ``#v2`` suffix is ignored), else ``KeyError``."""
        base_id = boundary_id.split("#", 1)[0]
        for boundary in self.boundaries:
            if boundary.id == base_id:
                return boundary
        raise KeyError(f"no boundary with id {boundary_id!r}")

    def contact_params(
        self, boundary: SegmentBoundary | PolylineBoundary | ArcBoundary | str | None = None
    ) -> tuple[float, float]:
        """``(restitution, friction)`` for contacts with ``boundary`` (a model or an id).

        A boundary's own values override ``contact``; ``None`` (or the id of a
        body) gives the scene defaults, which disk–disk contacts use.
        """
        if isinstance(boundary, str):
            base_id = boundary.split("#", 1)[0]
            boundary = next((b for b in self.boundaries if b.id == base_id), None)
        restitution, friction = self.contact.restitution, self.contact.friction
        if boundary is not None:
            if boundary.restitution is not None:
                restitution = boundary.restitution
            if boundary.friction is not None:
                friction = boundary.friction
        return restitution, friction

    def compliance_for(
        self, boundary: SegmentBoundary | PolylineBoundary | ArcBoundary | str | None = None
    ) -> Compliance | None:
        """The compliance of contacts with ``boundary`` (a model or an id), ``None`` if rigid.

        A boundary's own ``compliance`` overrides ``contact.compliance``;
        ``None`` (or the id of a body) gives ``contact.compliance``, which
        body–body contacts use.
        """
        if isinstance(boundary, str):
            base_id = boundary.split("#", 1)[0]
            boundary = next((b for b in self.boundaries if b.id == base_id), None)
        if boundary is not None and boundary.compliance is not None:
            return boundary.compliance
        return self.contact.compliance

    @property
    def has_compliance(self) -> bool:
        """Some contact of the scene is compliant."""
        return self.contact.compliance is not None or any(
            b.compliance is not None for b in self.boundaries
        )


# ------------------------------------------------------------------- errors, I/O


class SceneError(InputError):
    """A scene is invalid; ``problems`` lists each as ``"<json path>: <message>"``.

    ``str(error)`` is the problems joined by newlines, one line per problem,
    as the command line prints them.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _json_path(loc: Loc, data: Any) -> str:
    """``('bodies', 0, 'wheel', 'mass')`` → ``bodies[0].mass`` (dropping pydantic's union tags)."""
    path = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            in_range = isinstance(node, (list, tuple)) and -len(node) <= part < len(node)
            node = node[part] if in_range else None
            continue
        if isinstance(node, dict) and part not in node and node.get("type") == part:
            continue
        path += f".{part}" if path else part
        node = node.get(part) if isinstance(node, dict) else None
    return path or "(scene)"


def _plain_message(error: dict[str, Any]) -> str:
    """Rewrite one pydantic error in the words of this program."""
    kind, ctx, got = error["type"], error.get("ctx", {}), _show(error.get("input"))

    def options(name: str) -> str:
        return ", ".join(re.findall(r"'([^']*)'", ctx.get(name, "")))

    def bound(name: str) -> str:
        return f"{ctx.get(name, 0):g}"

    messages: dict[str, Callable[[], str]] = {
        "greater_than": lambda: f"must be > {bound('gt')}, got {got}",
        "greater_than_equal": lambda: f"must be >= {bound('ge')}, got {got}",
        "less_than": lambda: f"must be < {bound('lt')}, got {got}",
        "less_than_equal": lambda: f"must be <= {bound('le')}, got {got}",
        "finite_number": lambda: f"must be a finite number, got {got}",
        "float_type": lambda: f"must be a number, got {got}",
        "string_type": lambda: f"must be a string, got {got}",
        "string_unicode": lambda: (
            "holds a character that cannot be saved as UTF-8 (a lone surrogate)"
        ),
        "string_too_long": lambda: (
            f"must have at most {ctx.get('max_length')} characters, got {len(error['input'])}"
        ),
        "too_long": lambda: (
            f"must have at most {ctx.get('max_length')} items, got {ctx.get('actual_length')}"
        ),
        "extra_forbidden": lambda: "unknown key",
        "missing": lambda: "required key is missing",
        "literal_error": lambda: f"must be one of {options('expected')}, got {got}",
        "union_tag_invalid": lambda: (
            f"must be one of {options('expected_tags')}, got {_show(ctx.get('tag'))}"
        ),
        "union_tag_not_found": lambda: "required key is missing",
        "model_type": lambda: f"must be an object, got {got}",
        "model_attributes_type": lambda: f"must be an object, got {got}",
        "tuple_type": lambda: f"must be a list, got {got}",
        "too_short": lambda: (
            f"must have at least {ctx.get('min_length')} items, got {ctx.get('actual_length')}"
        ),
    }
    if kind in messages:
        return messages[kind]()
    return error["msg"]


def _problems_from(error: ValidationError, data: Any) -> list[str]:
    problems = []
    for e in error.errors(include_url=False):
        loc = tuple(e["loc"])
        if e["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc += ("type",)
        problems.append(f"{_json_path(loc, data)}: {_plain_message(e)}")
    return problems


def _from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: the same object; an impulse ``frame`` did not exist in version 1."""
    impulses = data.get("impulses")
    if isinstance(impulses, list):
        for index, impulse in enumerate(impulses):
            if isinstance(impulse, dict) and "frame" in impulse:
                raise SceneError(
                    [f"impulses[{index}].frame: needs version 2 (this file says version 1)"]
                )
    return data


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_version_1}
"""Upgrade steps: ``_MIGRATIONS[n]`` turns a version-n object into a version-(n+1) one."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a scene object of any known version up to ``VERSION``.

    Raises
    ------
    SceneError
        If ``format`` is not ``"impactgui-scene"`` or ``version`` is missing,
        not a positive integer, or newer than this program.
    """
    if data.get("format") != FORMAT:
        got = _show(data["format"]) if "format" in data else "nothing"
        raise SceneError([f"format: must be {FORMAT!r} (not an impactgui scene?), got {got}"])
    version = data.get("version")
    if "version" not in data:
        raise SceneError([f"version: required key is missing (this program writes {VERSION})"])
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SceneError([f"version: must be a positive integer, got {_show(version)}"])
    if version > VERSION:
        raise SceneError(
            [f"version: {version} is newer than this program reads ({VERSION}); update impactgui"]
        )
    while data["version"] < VERSION:
        data = {**_MIGRATIONS[data["version"]](data), "version": data["version"] + 1}
    return data


def nesting_depth(data: Any, limit: int = MAX_NESTING) -> int:
    """Depth of nested lists and dicts in ``data`` (a scalar is 0), counted up to ``limit + 1``.

    Iterative, so any depth is measured without recursion; it stops descending
    past ``limit``.
    """
    deepest = 0
    pending = [(data, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= limit:
            pending.extend((child, depth + 1) for child in children)
    return deepest


def text_nesting_depth(text: str) -> int:
    """Deepest nesting of ``[`` and ``{`` in JSON text (strings skipped), without parsing it."""
    brackets = re.sub(r"[^\[\]{}]+", "", re.sub(r'"(?:[^"\\]|\\.)*"', "", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _nesting_problem() -> str:
    return (
        f"(scene): arrays and objects nested more than {MAX_NESTING} levels deep "
        "(a scene needs 5): not a scene file"
    )


def parse_scene(data: dict[str, Any]) -> Scene:
    """Validate a scene object (the parsed JSON) and return the ``Scene``.

    Raises
    ------
    SceneError
        Listing every problem as ``"<json path>: <message>"``; data nested
        deeper than ``MAX_NESTING`` is refused as a whole.
    """
    if not isinstance(data, dict):
        raise SceneError([f"(scene): must be a JSON object, got {_show(data)}"])
    depth = nesting_depth(data)
    if depth > MAX_NESTING:
        raise SceneError([_nesting_problem()])
    data = migrate(data)
    try:
        return Scene.model_validate(data)
    except ValidationError as error:
        raise SceneError(_problems_from(error, data)) from None


def read_scene_text(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """The text of the scene file at ``path``: a regular file of at most ``limit`` bytes.

    The file is opened without blocking and checked before it is read, so a
    FIFO, a device or a directory is refused at once instead of waiting for a
    writer or reading without end.

    Raises
    ------
    SceneError
        If the file is missing, not a regular file, larger than ``limit``,
        unreadable or not UTF-8.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise SceneError([f"{path}: cannot read the file ({error.strerror or error})"]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SceneError([f"{path}: not a regular file (a folder, device or pipe)"])
        if info.st_size > limit:
            raise SceneError(
                [
                    f"{path}: the file has {info.st_size:,} bytes, more than the limit of "
                    f"{limit:,} for a scene file"
                ]
            )
        with os.fdopen(os.dup(fd), "rb") as stream:
            raw = stream.read(limit + 1)
    except OSError as error:
        raise SceneError([f"{path}: cannot read the file ({error.strerror or error})"]) from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise SceneError([f"{path}: the file grew past the limit of {limit:,} bytes while read"])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SceneError([f"{path}: not UTF-8 text (byte {error.start})"]) from None


def scene_data_from_text(text: str, source: str = "(scene)") -> Any:
    """Parse scene JSON text, refusing nesting deeper than ``MAX_NESTING`` before parsing.

    Raises
    ------
    SceneError
        For invalid JSON (line and column given, ``source`` naming the file),
        too deep nesting or a number too long to read.
    """
    depth = text_nesting_depth(text)
    if depth > MAX_NESTING:
        raise SceneError([f"{source}: {_nesting_problem().removeprefix('(scene): ')}"])
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SceneError(
            [f"{source}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"]
        ) from None
    except (ValueError, RecursionError) as error:
        raise SceneError([f"{source}: cannot read the JSON ({error})"]) from None


def load_scene(path: str | os.PathLike[str]) -> Scene:
    """Read and validate the scene file at ``path``.

    Raises
    ------
    SceneError
        If the file cannot be read (see :func:`read_scene_text`: only regular
        files of at most ``MAX_FILE_BYTES``), is not valid JSON (line and
        column given), or is not a valid scene.
    """
    path = Path(path)
    return parse_scene(scene_data_from_text(read_scene_text(path), str(path)))


def scene_to_dict(scene: Scene) -> dict[str, Any]:
    """The JSON object of ``scene``: every key, defaults included, ``null`` values left out."""
    data = scene.model_dump(mode="json", exclude_none=True)
    if not data["actions"]:
        del data["actions"]  # an extension: a scene without actions is written as before
    return data


def _format_json(value: Any, indent: int = 0, width: int = 120) -> str:
    """JSON text with small objects and arrays on one line and larger ones spread out."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    if (indent and len(flat) + indent <= width) or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k)}: {_format_json(v, indent + 2, width)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{inner}{_format_json(v, indent + 2, width)}" for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def save_scene(scene: Scene, path: str | os.PathLike[str]) -> None:
    """Write ``scene`` to ``path`` as JSON, atomically.

    The text goes to a temporary file in the same directory, which then
    replaces ``path``: a failure at any point leaves the old file untouched
    and no temporary file behind.
    """
    path = Path(path)
    text = _format_json(scene_to_dict(scene)) + "\n"
    with atomic_write(path) as stream:
        stream.write(text)
