"""A GapSet's rows by kind, read from the pairs themselves: the answers its short cuts give.

``GapSet.arc_rows`` and ``cover_arcs`` answer ``[]`` at once in a scene
without arcs (``DiskKinematics.arcs``), ``GapSet.ordered`` is False at once
with one disk, and ``EventHandler.closed_pairs`` compares a few gaps on
floats. Each is checked here against the pairs' own features, orders and
gaps, in scenes with and without arcs, disk pairs and beads on one rail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver.event_tolerances import GAP_TOL, PENETRATION_TOL
from solver.gap_set import GapSet
from solver.geometry import Arc, Vertex
from solver.scene import load_scene, parse_scene
from solver.simulation import make_stepper

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"

ARC_SCENE = {
    "format": "impactgui-scene",
    "version": 2,
    "gravity": [0.0, -9.81],
    "contact": {"restitution": 0.4, "friction": 0.0},
    "boundaries": [
        {"id": "curb", "type": "polyline",
         "points": [[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]]},
        {"id": "bump", "type": "arc", "center": [1.5, 0.0], "radius": 0.2,
         "start_deg": 0, "end_deg": 180},
        {"id": "cap", "type": "arc", "center": [2.2, 0.0], "radius": 0.2,
         "start_deg": 0, "end_deg": 180},
    ],
    "bodies": [
        {"id": "w", "type": "wheel", "mass": 10, "inertia": 0.05, "radius": 0.1,
         "position": [0.8, 0.2]},
        {"id": "b1", "type": "bead", "rail_y": 0.2, "mass": 2, "radius": 0.05, "x": 0.3},
        {"id": "b2", "type": "bead", "rail_y": 0.2, "mass": 3, "radius": 0.05, "x": 0.45},
    ],
}  # fmt: skip


def every_pair(scene) -> tuple[object, GapSet]:
    stepper = make_stepper(scene, t_end=0.5, dt_out=0.5, method="event-driven")
    kin, system = stepper.setup.kin, stepper.system
    return stepper, GapSet(kin, kin.candidates(system.q0, 100.0, np.arange(system.n_disks)))


SCENE_CASES = [
    ("bouncing ball", lambda: load_scene(SCENES / "bouncing_ball.json")),
    ("wheel at a curb", lambda: load_scene(SCENES / "wheel_curb_e03.json")),
    ("four balls", lambda: load_scene(SCENES / "four_balls.json")),
    ("cradle on a rail", lambda: load_scene(SCENES / "newton_cradle_3_staged.json")),
    ("arcs, a wheel and beads", lambda: parse_scene(ARC_SCENE)),
]


@pytest.mark.parametrize("make", [make for _, make in SCENE_CASES], ids=[n for n, _ in SCENE_CASES])
def test_rows_by_kind_are_read_from_the_pairs(make):
    stepper, gaps = every_pair(make())
    pairs = list(gaps.pairs)
    assert len(pairs) > 1
    assert gaps.arc_rows == [n for n, p in enumerate(pairs) if isinstance(p.feature, Arc)]
    # the corners of vertex pairs, in row order, and the arcs ending at each
    kin = stepper.setup.kin
    vertices = [n for n, p in enumerate(pairs) if p.j < 0 and isinstance(p.feature, Vertex)]
    covering = [
        (place, f)
        for place, n in enumerate(vertices)
        for f in kin.neighbours[pairs[n].feature_index]
        if isinstance(f, Arc)
    ]
    assert gaps.cover_arcs == covering
    assert gaps.ordered == any(p.order != 0.0 for p in pairs)
    assert kin.arcs == any(isinstance(f, Arc) for _, f, _, _ in kin.feature_list)


def test_the_arc_scene_has_arc_rows_and_the_ball_none():
    """The cases above reach both answers: arc rows found where there are arcs."""
    _, arcs = every_pair(parse_scene(ARC_SCENE))
    _, ball = every_pair(load_scene(SCENES / "bouncing_ball.json"))
    assert arcs.arc_rows and arcs.kin.arcs
    assert ball.arc_rows == [] and not ball.kin.arcs


def test_closed_pairs_are_the_pairs_within_the_contact_band():
    """The ball at rest after its Zeno end: the ground pair alone, read from the gaps."""
    stepper = make_stepper(load_scene(SCENES / "bouncing_ball.json"), t_end=1.5, dt_out=1.5)
    while stepper.status == "running":
        stepper.step()
    every = stepper.pairs.all_candidates()
    g = every.gaps(stepper.motion.q, band=True).tolist()
    expected = [every.pairs[n].key for n, x in enumerate(g) if -PENETRATION_TOL <= x <= GAP_TOL]
    assert [p.key for p in stepper.handler.closed_pairs()] == expected == [("ball", "ground")]
