"""The scene file's field types and limits: what a number, a length, an identifier may be
(docs/LIMITS.md), shared by the models of :mod:`solver.scene_parts` and :mod:`solver.scene`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
)
from pydantic_core import PydanticCustomError

FORMAT = "impactgui-scene"
"""Value of the ``format`` key of every scene file."""


VERSION = 2
"""The scene-file version this program writes (and the newest it reads)."""


ImpactLaw = Literal["staged", "poisson", "sequential", "newton"]
"""Impact laws of MECHANICS §3, selectable per scene with ``contact.impact_law``."""


IMPACT_LAWS: tuple[str, ...] = get_args(ImpactLaw)


TOUCH_TOLERANCE = 1e-12
"""Relative tolerance (of the scene's length scale) under which disks touch rather than overlap."""


SIDE_GRAVITY = (0.0, -9.81)
"""Default gravity of a side-view scene, m/s²."""


# ----------------------------------------------------------------------- limits
# What a scene may ask for (docs/LIMITS.md). Past these a file is refused with the
# reason, so every run ends in one of the documented outcomes: no number overflows
# to inf, no recursion runs out of stack, no allocation is sized by a typo.

MAX_FILE_BYTES = 16 * 2**20
"""Largest scene file read, bytes (16 MiB; a 1000-bead chain takes about 200 kB)."""


MAX_NESTING = 16
"""Deepest nesting of JSON arrays and objects (a scene needs 5)."""


MAX_ITEMS = 10_000
"""Most entries in each list section (``boundaries``, ``bodies``, …) and polyline points."""


MAX_TEXT = 10_000
"""Longest ``title`` or ``description``, characters; ids have at most ``MAX_ID`` characters."""


MAX_ID = 200


MAX_SAMPLES = 1_000_000
"""Most output samples of a run, ``t_end / dt_out`` (about 1 kB of memory each)."""


MAX_TIME_STEPS = 10_000_000
"""Most time-stepping steps of a run, ``t_end / dt``."""


MAX_PROBLEMS = 100
"""Most cross-field problems listed for one scene (the checks stop there)."""


MAGNITUDES: dict[str, tuple[float, float, str]] = {
    "coordinate": (0.0, 1e6, "m"),
    "length": (1e-6, 1e6, "m"),
    "mass": (1e-6, 1e6, "kg"),
    "inertia": (1e-18, 1e18, "kg·m²"),
    "speed": (0.0, 1e6, "m/s"),
    "angle": (0.0, 1e6, "rad"),
    "degrees": (0.0, 1e6, "°"),
    "rate": (0.0, 1e6, "rad/s"),
    "acceleration": (0.0, 1e4, "m/s²"),
    "stiffness": (0.0, 1e12, "N/m"),
    "damping": (0.0, 1e12, "N·s/m"),
    "force": (0.0, 1e12, "N"),
    "impulse": (0.0, 1e9, "N·s"),
    "friction": (0.0, 100.0, ""),
    "time": (0.0, 1e6, "s"),
    "duration": (1e-9, 1e6, "s"),
    "tolerance": (1e-15, 1.0, ""),
}
"""Range of magnitudes of each kind of number: ``(smallest nonzero, largest, unit)``.

A signed quantity (a coordinate, a velocity) may be zero or anything up to the
largest magnitude in either direction; a positive one (a mass, a radius, a time
step) lies between the two bounds. These keep energies, gaps and sample counts
finite and the arithmetic well inside double precision.
"""


# ---------------------------------------------------------------- field types


def _as_pair(value: Any) -> Any:
    """Refuse anything but a two-element array before the numbers are checked."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return tuple(value)
    raise PydanticCustomError("pair", "must be a pair [x, y], got {got}", {"got": _show(value)})


def _as_id(value: Any) -> Any:
    """Refuse empty ids and ids with ``#`` (reserved for feature suffixes like ``curb#v2``)."""
    if isinstance(value, str) and (not value.strip() or "#" in value):
        raise PydanticCustomError(
            "identifier", "must be a non-empty name without '#', got {got}", {"got": _show(value)}
        )
    return value


def _within(kind: str) -> AfterValidator:
    """Refuse a number whose magnitude lies outside ``MAGNITUDES[kind]``."""
    smallest, largest, unit = MAGNITUDES[kind]

    def check(value: float) -> float:
        size = abs(value)
        if size > largest or (0.0 < size < smallest):
            low = f"{smallest:g} to " if smallest else "up to "
            raise PydanticCustomError(
                "magnitude",
                "must have a magnitude of {low}{largest}{unit} (the range of {kind}s this "
                "program computes with finite, accurate numbers), got {got}",
                {
                    "low": low,
                    "largest": f"{largest:g}",
                    "unit": f" {unit}" if unit else "",
                    "kind": kind,
                    "got": _show(value),
                },
            )
        return value

    return AfterValidator(check)


Number = Annotated[float, Strict()]
"""A finite JSON number (integers accepted, booleans and strings refused)."""


Positive = Annotated[float, Strict(), Field(gt=0)]


NonNegative = Annotated[float, Strict(), Field(ge=0)]


Fraction = Annotated[float, Strict(), Field(ge=0, le=1)]


Coordinate = Annotated[Number, _within("coordinate")]


Length = Annotated[Positive, _within("length")]


Vec2 = Annotated[tuple[Number, Number], BeforeValidator(_as_pair)]
"""A 2-vector ``[x, y]`` (JSON array of two numbers)."""


Point2 = Annotated[tuple[Coordinate, Coordinate], BeforeValidator(_as_pair)]
"""A point ``[x, y]`` of the plane, m, each coordinate within ``MAGNITUDES["coordinate"]``."""


def _vector(kind: str) -> Any:
    """A 2-vector type whose components lie within ``MAGNITUDES[kind]``."""
    component = Annotated[Number, _within(kind)]
    return Annotated[tuple[component, component], BeforeValidator(_as_pair)]


Mass = Annotated[Positive, _within("mass")]


Angle = Annotated[Number, _within("angle")]


Friction = Annotated[NonNegative, _within("friction")]


Duration = Annotated[Positive, _within("duration")]


Tolerance = Annotated[Positive, _within("tolerance")]


def _encodable(value: str) -> str:
    """Refuse text that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise PydanticCustomError(
            "text",
            "holds a character that cannot be saved as UTF-8 (a lone surrogate) at position {at}",
            {"at": error.start},
        ) from None
    return value


Text = Annotated[str, Strict(), Field(max_length=MAX_TEXT), AfterValidator(_encodable)]
"""Free text (title, description): at most ``MAX_TEXT`` characters; lone surrogates refused."""


Identifier = Annotated[
    str, Strict(), BeforeValidator(_as_id), Field(max_length=MAX_ID), AfterValidator(_encodable)
]
"""An id of a body or boundary: non-empty, no ``#``."""


class _Model(BaseModel):
    """Common configuration: unknown keys refused, numbers finite, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _show(value: Any) -> str:
    """A value as the user wrote it: JSON-like, strings quoted."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (dict, list, tuple)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    return repr(value)
