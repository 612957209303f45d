"""Scene models for engine tests: side view, gravity straight down, staged impact law."""

from __future__ import annotations

from collections.abc import Iterable

from solver.scene import Scene, parse_scene

G_ACC = 9.81
"""Gravity (m/s²) of these scenes."""


def gravity_scene(
    bodies: Iterable[dict],
    boundaries: Iterable[dict] = (),
    springs: Iterable[dict] = (),
    forces: Iterable[dict] = (),
    restitution: float = 0.5,
    friction: float = 0.0,
    t_end: float = 1.0,
    dt_out: float = 0.01,
) -> Scene:
    """The scene of ``bodies`` among ``boundaries`` (scene-file dicts), run to ``t_end`` (s)."""
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": [0.0, -G_ACC],
            "contact": {"restitution": restitution, "friction": friction, "impact_law": "staged"},
            "boundaries": list(boundaries),
            "bodies": list(bodies),
            "springs": list(springs),
            "forces": list(forces),
            "solver": {"t_end": t_end, "dt_out": dt_out},
        }
    )
