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
