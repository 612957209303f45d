"""Names the window shows for the solver's ids, in the user's words.

The solver names a contact's obstacle by a boundary id with a feature suffix
(``curb#v2``: vertex 2 of the polyline ``curb``; ``curb#s1``: its segment 1).
Those ids are the public contract of the CSV files and stay as they are
there; the window writes them out (``curb, vertex 2``). Velocity components
are named with their units (``vx``, ``vy`` in m/s; ``ω`` in rad/s).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from solver.roundoff import SPEEDS

_FEATURE = re.compile(r"^(?P<id>.+)#(?P<kind>[vs])(?P<index>\d+)$")
_FEATURE_WORDS = {"v": "vertex", "s": "side"}

RATE_SYMBOLS = {"omega": "ω", "omegaA": "ωA", "omegaB": "ωB"}
"""How the angular rates of ``System.dof_labels`` are written."""


def obstacle_name(other: str) -> str:
    """``"curb#v2"`` → ``"curb, vertex 2"``, ``"curb#s1"`` → ``"curb, side 1"``; else unchanged."""
    match = _FEATURE.match(other)
    if match is None:
        return other
    return f"{match['id']}, {_FEATURE_WORDS[match['kind']]} {match['index']}"


def contact_name(body: str, other: str | None) -> str:
    """A contact in words: ``"wheel – curb, vertex 2"`` (the body alone when ``other`` is empty)."""
    return f"{body} – {obstacle_name(other)}" if other else body


def rates_text(names: Sequence[str], values: Sequence[float]) -> str:
    """Velocity components labelled with their units: ``"vx = 0.1, vy = -3 m/s; ω = 2 rad/s"``."""
    groups: list[str] = []
    for unit, linear in (("m/s", True), ("rad/s", False)):
        parts = [
            f"{RATE_SYMBOLS.get(name, name)} = {value:.4g}"
            for name, value in zip(names, values, strict=True)
            if (name in SPEEDS) == linear
        ]
        if parts:
            groups.append(f"{', '.join(parts)} {unit}")
    return "; ".join(groups)


FIELD_WORDS = {
    "gravity": "gravity g",
    "restitution": "restitution e",
    "friction": "friction μ",
    "mass": "mass",
    "inertia": "inertia J",
    "radius": "radius",
    "position": "position",
    "angle": "angle φ",
    "velocity": "velocity",
    "angular_velocity": "angular velocity ω",
    "rail_y": "rail height",
    "x": "position x",
    "vx": "velocity vx",
    "axle_mass": "axle mass",
    "half_length": "half axle length",
    "wheel_mass": "wheel mass",
    "wheel_radius": "wheel radius",
    "wheel_angles": "wheel angle",
    "wheel_rates": "wheel rate",
    "stiffness": "stiffness k",
    "rest_length": "rest length",
    "damping": "damping c",
    "anchor": "anchor",
    "amplitude": "amplitude",
    "omega": "angular frequency ω",
    "phase": "phase",
    "center": "centre",
    "a": "end a",
    "b": "end b",
    "start_deg": "start angle",
    "end_deg": "end angle",
    "time": "time",
    "point": "point",
    "vector": "impulse",
    "t_end": "end time",
    "dt_out": "output step",
    "dt": "time step",
}
"""Scene keys in words, for the labels of a sweep's fields."""

_PATH_PART = re.compile(r"([A-Za-z_]+)|\[(\d+)\]")
_COLLECTIONS = ("bodies", "boundaries", "springs", "forces", "impulses")
_COMPONENTS = {
    key: "xy"
    for key in ("gravity", "position", "velocity", "amplitude", "a", "b", "center", "anchor")
}
_COMPONENTS |= {"point": "xy", "vector": "xy", "points": ""}


def field_label(path: str, scene: dict) -> str:
    """A scene number's path in words: ``"forces[0].omega"`` → ``"forcing on mass: angular
    frequency ω"``, ``"contact.restitution"`` → ``"restitution e"``, ``"gravity[1]"`` →
    ``"gravity g y"``. Unknown parts are kept as they are."""
    parts: list[str | int] = [
        name if name else int(index) for name, index in _PATH_PART.findall(path)
    ]
    owner = ""
    if len(parts) >= 2 and parts[0] in _COLLECTIONS and isinstance(parts[1], int):
        items = scene.get(str(parts[0]), [])
        item = items[parts[1]] if parts[1] < len(items) else {}
        item = item if isinstance(item, dict) else {}
        owner = _owner(str(parts[0]), item, parts[1])
        parts = parts[2:]
    elif parts and parts[0] in ("contact", "solver"):
        parts = parts[1:]
    words: list[str] = []
    for k, part in enumerate(parts):
        if isinstance(part, int):
            before = parts[k - 1] if k else ""
            if before == "points":  # a polyline's k-th point, then its x or y
                words[-1] = f"point {part + 1}"
                parts[k] = "point"
                continue
            axes = _COMPONENTS.get(str(before), "")
            words.append(axes[part] if part < len(axes) else str(part + 1))
        else:
            words.append(FIELD_WORDS.get(part, part))
    text = " ".join(words) or path
    return f"{owner}: {text}" if owner else text


def _owner(collection: str, item: dict, index: int) -> str:
    if collection == "forces":
        return f"forcing on {item.get('body', index + 1)}"
    if collection == "springs":
        ends = [str(item[key]) for key in ("a", "b") if key in item]
        return "spring " + "–".join(ends) if ends else f"spring {index + 1}"
    if collection == "impulses":
        return f"impulse on {item.get('body', index + 1)}"
    return str(item.get("id", f"{collection} {index + 1}"))


IMPACT_SPEED_LABEL = "impact speed before the impact"
"""The sweep's bifurcation observable (``u_n⁻`` of the CSV files) in words."""
