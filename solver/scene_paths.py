"""Scene fields named by their JSON path: reading, changing, and listing what can vary.

A path is written as the problem lines of the scene validation write it:
keys joined by dots, list items by index in brackets — ``contact.restitution``,
``bodies[0].velocity[1]``, ``forces[0].omega``, ``springs[1].stiffness``.
Sweeps (:mod:`solver.sweep`) change one or several such fields and validate
the scene again; the app lists :func:`numeric_fields` as what a sweep can vary.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from solver.errors import InputError
from solver.scene import Scene, parse_scene, scene_to_dict

Part = str | int
"""One step of a path: a key of an object or an index of a list."""

_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]")

UNITS: dict[str, str] = {
    "gravity": "m/s²",
    "restitution": "",
    "friction": "",
    "mass": "kg",
    "inertia": "kg·m²",
    "radius": "m",
    "position": "m",
    "angle": "rad",
    "velocity": "m/s",
    "angular_velocity": "rad/s",
    "rail_y": "m",
    "x": "m",
    "vx": "m/s",
    "axle_mass": "kg",
    "half_length": "m",
    "wheel_mass": "kg",
    "wheel_radius": "m",
    "wheel_angles": "rad",
    "wheel_rates": "rad/s",
    "stiffness": "N/m",
    "rest_length": "m",
    "damping": "N·s/m",
    "anchor": "m",
    "amplitude": "N",
    "omega": "rad/s",
    "phase": "rad",
    "a": "m",
    "b": "m",
    "points": "m",
    "center": "m",
    "start_deg": "°",
    "end_deg": "°",
    "time": "s",
    "point": "m",
    "vector": "N·s",
    "t_end": "s",
    "dt_out": "s",
    "dt": "s",
    "rtol": "",
    "atol": "",
}
"""Unit of a numeric scene field, by its key (the last key of its path)."""

_OPTIONAL_NUMBERS = {
    "boundaries": ("restitution", "friction"),
    "solver": ("rtol", "atol"),
}
"""Optional keys whose absence means ``null`` (a path may name them although unset)."""


class ScenePathError(InputError):
    """A path names no field of the scene, or a field a value cannot be given to.

    ``str(error)`` is one line: ``"<path>: <reason>"``.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def parse_path(path: str) -> tuple[Part, ...]:
    """Split ``"bodies[0].velocity[1]"`` into ``("bodies", 0, "velocity", 1)``.

    Raises
    ------
    ScenePathError
        If ``path`` is not keys joined by dots and ``[index]`` steps.
    """
    parts: list[Part] = []
    position = 0
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None or (position == 0 and path.startswith((".", "["))):
            raise ScenePathError(
                path, "not a field path (write it as contact.restitution, bodies[0].velocity[1], …)"
            )
        key, index = match.groups()
        parts.append(key if key is not None else int(index))
        position = match.end()
    if not parts:
        raise ScenePathError(path, "empty field path")
    return tuple(parts)


def format_path(parts: tuple[Part, ...]) -> str:
    """The inverse of :func:`parse_path`."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _node(data: Any, parts: tuple[Part, ...], path: str) -> Any:
    """The value at ``parts`` in the scene object ``data`` (defaults included)."""
    node = data
    for depth, part in enumerate(parts):
        here = format_path(parts[:depth]) or "(scene)"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ScenePathError(path, f"{here} is not a list")
            if not 0 <= part < len(node):
                raise ScenePathError(path, f"{here} has {len(node)} items, no item {part}")
            node = node[part]
            continue
        if not isinstance(node, dict):
            raise ScenePathError(path, f"{here} is not an object")
        if part not in node:
            if depth == len(parts) - 1 and _may_be_unset(parts):
                return None
            raise ScenePathError(path, "no such field in the scene")
        node = node[part]
    return node


def _may_be_unset(parts: tuple[Part, ...]) -> bool:
    section = parts[0]
    return isinstance(section, str) and parts[-1] in _OPTIONAL_NUMBERS.get(section, ())


def field_value(scene: Scene, path: str) -> Any:
    """The value of the field at ``path`` in ``scene`` (its default if the file left it out).

    Raises
    ------
    ScenePathError
        If the scene has no such field.
    """
    return _node(scene_to_dict(scene), parse_path(path), path)


def check_settable(scene: Scene, path: str) -> None:
    """Refuse a path that names no single value of ``scene`` (an object, a list, nothing).

    Raises
    ------
    ScenePathError
        Naming the path and why.
    """
    value = field_value(scene, path)
    if isinstance(value, dict):
        raise ScenePathError(path, "is an object; name one of its fields")
    if isinstance(value, list):
        raise ScenePathError(path, "is a list; name one of its items ([0], [1], …)")


def with_values(scene: Scene, values: Mapping[str, Any]) -> Scene:
    """A copy of ``scene`` with the fields at the given paths set, validated again.

    Parameters
    ----------
    scene : Scene
        The scene to start from (unchanged).
    values : mapping of str to value
        Field path → new value (a number, or a string for fields like
        ``contact.impact_law``), in the units of the scene file.

    Returns
    -------
    Scene
        The changed scene.

    Raises
    ------
    ScenePathError
        A path names no value of the scene.
    SceneError
        The changed scene is invalid; each problem line starts with the path
        of the field at fault (``bodies[0].mass: must be > 0, got -1.0``).
    """
    data = scene_to_dict(scene)
    changed = copy.deepcopy(data)
    for path, value in values.items():
        check_settable(scene, path)
        parts = parse_path(path)
        parent = _node(changed, parts[:-1], path)
        parent[parts[-1]] = value
    return parse_scene(changed)


@dataclass(frozen=True)
class NumericField:
    """A number of the scene a sweep can vary.

    ``path`` as :func:`parse_path` reads it, ``value`` its current value,
    ``unit`` its SI unit (``""`` for pure numbers).
    """

    path: str
    value: float
    unit: str


def numeric_fields(scene: Scene) -> list[NumericField]:
    """Every number of ``scene`` that a sweep can vary, in file order, with its unit.

    Version and format keys are left out; so are optional overrides that are
    unset (``boundaries[0].restitution`` when the boundary uses the scene's
    ``contact`` value), which a sweep may still name.
    """
    return list(_numbers(scene_to_dict(scene), ()))


def _numbers(node: Any, parts: tuple[Part, ...]) -> Iterator[NumericField]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "version":
                yield from _numbers(value, (*parts, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _numbers(value, (*parts, index))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        key = next(part for part in reversed(parts) if isinstance(part, str))
        yield NumericField(format_path(parts), float(node), UNITS.get(key, ""))
