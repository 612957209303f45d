"""Scene models for engine tests: side view, gravity straight down (or none), unit beads."""

from __future__ import annotations

from collections.abc import Iterable

from solver.scene import MAX_ITEMS, Bead, Scene, parse_scene

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


def uniform_wheel(name: str, radius: float, x: float, y: float) -> dict:
    """A 1 kg uniform disk of ``radius`` (m) at rest at (``x``, ``y``) (m), as a scene-file dict."""
    return {
        "id": name,
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.5 * radius**2,
        "radius": radius,
        "position": [x, y],
    }


def bead_row(xs: Iterable[float], vxs: Iterable[float], contact: dict) -> Scene:
    """Unit beads of radius 0.5 m on the rail y = 0 at ``xs`` (m) moving at ``vxs`` (m/s),
    no gravity, ``contact`` as in the scene file.

    A scene file holds at most ``MAX_ITEMS`` bodies (docs/LIMITS.md); past
    that the solver itself is tested: each bead is validated on its own and
    the list is put in place of a valid scene's bodies.
    """
    beads = [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.5,
         "x": float(x), "vx": float(vx)}
        for k, (x, vx) in enumerate(zip(xs, vxs, strict=True))
    ]  # fmt: skip
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": [0.0, 0.0],
            "contact": contact,
            "bodies": beads[:MAX_ITEMS],
        }
    )
    if len(beads) > MAX_ITEMS:
        scene = scene.model_copy(update={"bodies": tuple(Bead.model_validate(b) for b in beads)})
    return scene
