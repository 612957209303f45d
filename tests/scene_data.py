"""Scene models for engine tests: side view, gravity straight down (or none), unit beads."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

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


def small_ball(x: float, y: float, velocity: list[float] | None = None) -> dict:
    """The 1 kg ball of radius 0.1 m (inertia 0.005 kg·m²) at (``x``, ``y``) (m), as a dict.

    ``velocity`` (m/s) is written only when given (the scene's default is rest).
    """
    ball = {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": 0.1,
        "position": [x, y],
    }
    if velocity is not None:
        ball["velocity"] = velocity
    return ball


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


def wheels_and_beads_over(
    boundaries: Iterable[dict], radii: Iterable[float], beads: int
) -> tuple[Any, Any]:
    """A stepper for wheels of ``radii`` (m) and ``beads`` beads on one rail over ``boundaries``.

    The wheels sit 5 m apart at height 5 m, the beads (radius 0.05 m) 3 m apart
    on the rail y = 0.3 m. Returns the stepper and the GapSet of every pair
    within 100 m of the start.
    """
    from solver.gap_set import GapSet
    from solver.simulation import make_stepper

    bodies = [uniform_wheel(f"w{k}", r, 5.0 * k, 5.0) for k, r in enumerate(radii)]
    bodies += [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.3, "mass": 1.0, "radius": 0.05,
         "x": 3.0 * k - 9.0}
        for k in range(beads)
    ]  # fmt: skip
    stepper = make_stepper(gravity_scene(bodies, boundaries))
    kin, system = stepper.setup.kin, stepper.system
    return stepper, GapSet(kin, kin.candidates(system.q0, 100.0, np.arange(system.n_disks)))


def spring_chain(
    beads: int, t_end: float = 1.0, dt_out: float = 0.002, gap: float = 0.1, copies: int = 1
) -> Scene:
    """``copies`` forced spring chains of ``beads`` on rails 1 m apart: chain_forced's pattern.

    1 kg beads of radius 0.05 m, 0.2 m apart with 100 N/m springs of rest
    length 0.2 m (the first tied to an anchor 0.2 m before it), 10 N at
    8 rad/s on the last; neighbours collide with e = 0.8 (staged law).
    """
    bodies, springs, forces = [], [], []
    for c in range(copies):
        rail = float(c)
        ids = [f"c{c}b{i}" for i in range(beads)]
        x0 = 0.0
        for i, name in enumerate(ids):
            bodies.append(
                {"id": name, "type": "bead", "rail_y": rail, "mass": 1.0, "radius": 0.05,
                 "x": x0 + (2 * 0.05 + gap) * i, "vx": 0.0}
            )  # fmt: skip
        springs.append(
            {"a": ids[0], "anchor": [x0 - 0.2, rail], "stiffness": 100.0, "rest_length": 0.2,
             "damping": 0.0}
        )  # fmt: skip
        springs += [
            {"a": a, "b": b, "stiffness": 100.0, "rest_length": 0.2, "damping": 0.0}
            for a, b in itertools.pairwise(ids)
        ]
        forces.append(
            {"body": ids[-1], "type": "harmonic", "amplitude": [10.0, 0.0], "omega": 8.0,
             "phase": 0.0}
        )  # fmt: skip
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": f"{copies} x {beads}-bead forced spring chain",
            "view": "side",
            "gravity": [0.0, -9.81],
            "contact": {"restitution": 0.8, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [],
            "bodies": bodies,
            "springs": springs,
            "forces": forces,
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": dt_out, "dt": 1e-4},
        }
    )


def forced_spring_chain(beads: int, t_end: float = 2.0, dt_out: float = 0.01) -> dict[str, Any]:
    """The bundled ``chain_forced.json`` pattern with ``beads`` beads, as a scene dict.

    1 kg beads of radius 0.05 m, 0.2 m apart on the rail y = 0, joined by
    100 N/m springs of rest length 0.2 m, the first tied to an anchor 0.2 m
    before it; a harmonic force of 10 N at 8 rad/s on the last; restitution
    0.8, staged impact law, event-driven. The driven end's beads first hit
    each other at t ≈ 1.07 s.
    """
    bodies = [
        {"id": f"m{i + 1}", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05,
         "x": 0.2 * i, "vx": 0.0}
        for i in range(beads)
    ]  # fmt: skip
    spring = {"stiffness": 100.0, "rest_length": 0.2, "damping": 0.0}
    springs = [{"a": "m1", "anchor": [-0.2, 0.0], **spring}]
    springs += [{"a": f"m{i}", "b": f"m{i + 1}", **spring} for i in range(1, beads)]
    return {
        "format": "impactgui-scene", "version": 2, "title": f"chain {beads}", "view": "side",
        "gravity": [0.0, -G_ACC],
        "contact": {"restitution": 0.8, "friction": 0.0, "impact_law": "staged"},
        "boundaries": [], "bodies": bodies, "springs": springs,
        "forces": [
            {"body": f"m{beads}", "type": "harmonic", "amplitude": [10.0, 0.0], "omega": 8.0,
             "phase": 0.0}
        ],
        "impulses": [],
        "solver": {"method": "event-driven", "t_end": t_end, "dt_out": dt_out, "dt": 0.0001},
    }  # fmt: skip
